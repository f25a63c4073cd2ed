"""`python -m ortlint` runs the command line."""
from .cli import main

main(prog_name="ortlint")
