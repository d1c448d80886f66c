"""``python -m fcanalyze``: the command-line interface."""

from fcanalyze.cli import main

main()
