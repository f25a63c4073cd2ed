"""`python -m ortlint` runs the command line."""
from .cli import console

console()
