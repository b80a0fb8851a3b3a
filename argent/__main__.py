"""`python -m argent` runs the command-line client."""

from argent.cli.main import main

main()
