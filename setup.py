"""One build step pyproject.toml cannot express: ship the policy (rules/*.toml) and the rule pages
(docs/rules/*.md) inside the package. They live at the top of the repository, where people edit
them; a regular (non-editable) install, which is what pre-commit and CI do, copies them to
ortlint/rules and ortlint/docs/rules, where `policy.default_rules_dir` and `docs.docs_dir` look
first.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


DATA = (("rules", "*.toml", "ortlint/rules"), ("docs/rules", "*.md", "ortlint/docs/rules"))


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the files in place
        for source, pattern, target in DATA:
            out = Path(self.build_lib) / target
            out.mkdir(parents=True, exist_ok=True)
            for path in sorted((HERE / source).glob(pattern)):
                shutil.copyfile(path, out / path.name)


setup(cmdclass={"build_py": BuildPyWithData})
