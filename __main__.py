from deepresearch.cli import main

main()
