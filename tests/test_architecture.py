"""The architecture of docs/architecture.md, checked: the import-linter contracts of pyproject.toml
(no import cycles at any level; the layers; front ends one package per language on a shared layer),
and the folder list and the architecture page naming the same front-end packages and modules."""
from __future__ import annotations

import re

from importlinter.cli import lint_imports

from ortlint.frontends.registry import LANGUAGES, entry_point
from tests.clihelpers import ROOT

PACKAGE = ROOT / "ortlint"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_the_import_contracts_hold() -> None:
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_every_registered_language_has_a_front_end_entry_point() -> None:
    for language in LANGUAGES:
        assert callable(entry_point(language.parse)), language.name
        assert language.suffixes and all(s.startswith(".") for s in language.suffixes)


def test_the_architecture_page_names_every_front_end_package_and_only_modules_that_exist() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    packages = sorted(p.name for p in (PACKAGE / "frontends").iterdir() if (p / "__init__.py").is_file())
    for package in packages:
        assert f"frontends/{package}/" in text, f"docs/architecture.md does not describe frontends/{package}/"
    for path in set(re.findall(r"`((?:frontends|engine|orchestration|report|sanitizer)/[\w/]+\.py)`", text)):
        assert (PACKAGE / path).is_file(), f"docs/architecture.md names {path}, which does not exist"


def test_every_module_is_on_a_map() -> None:
    """Each module is named in its package's docstring map or on the architecture page."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for module in sorted(PACKAGE.rglob("*.py")):
        if module.name == "__init__.py" or module.parent == PACKAGE:
            continue
        init = (module.parent / "__init__.py").read_text(encoding="utf-8")
        name = module.relative_to(PACKAGE).as_posix()
        assert module.name in init or f"`{name}`" in text or f"`{module.name}`" in text, \
            f"{name} is on no map: name it in {module.parent.name}/__init__.py or docs/architecture.md"
