"""Ray itself: joining a cluster, spawning actors, Ray Jobs and their preflight."""
