"""Where the installed package lives: the shipped policy and rule pages are found from here."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
