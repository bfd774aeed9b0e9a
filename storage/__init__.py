"""Runs on disk: run directories, the runs list, private files, report paths."""
