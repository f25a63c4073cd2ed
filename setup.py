"""Two build steps pyproject.toml cannot express.

* Ship the policy (rules/*.toml) and the rule pages (docs/rules/*.md) inside the package. They
  live at the top of the repository, where people edit them; a regular (non-editable) install,
  which is what pre-commit and CI do, copies them to ortlint/rules and ortlint/docs/rules,
  where `policy.default_rules_dir` and `docs.docs_dir` look first.
* Compile the hot modules with Cython into ortlint/_native/ (see ortlint/_native/__init__.py),
  each file named after the digest of the source it came from. Optional: without a C compiler,
  or with ORTLINT_NO_NATIVE=1, the install goes on without them and ortlint runs as plain Python.
"""
import importlib.util
import os
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _native_module():
    """ortlint/_native/__init__.py, loaded by path: the package itself cannot be imported before
    its dependencies are installed."""
    spec = importlib.util.spec_from_file_location("_ortlint_native", HERE / "ortlint" / "_native" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -O1 runs as fast as the default -O3 here (the generated code is calls into Python's C API) and
# compiles four times faster; no debug information (the build is a speed-up, not something to debug)
COMPILE_ARGS = [] if os.name == "nt" else ["-O1", "-g0"]


def native_extensions():
    """One optional extension per hot module; its name (and so its file) carries the source digest."""
    if os.environ.get("ORTLINT_NO_NATIVE"):
        return []
    native = _native_module()
    out = []
    for module in native.MODULES:
        source = Path(native.source_file(module, str(HERE)))
        stem = native.native_stem(module, source.read_bytes())
        ext = Extension(f"ortlint._native.{stem}", [str(source.relative_to(HERE))], optional=True,
                        extra_compile_args=COMPILE_ARGS)
        ext.compiled_as = module  # the name the code is compiled under (and imported as)
        out.append(ext)
    return out


class BuildNative(build_ext):
    """Cythonize each module under its real name (its classes pickle as usual), then let
    setuptools compile it to the digest-named file in ortlint/_native/."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        try:
            from Cython.Build import cythonize
        except ImportError:
            print("ortlint: Cython is not available; the compiled modules are skipped (plain Python)")
            return
        compiled = []
        for ext in self.extensions:
            try:
                (generated,) = cythonize(
                    [Extension(ext.compiled_as, ext.sources)], build_dir="build/cython", quiet=True,
                    # keep Python's semantics exactly: annotations are not C types
                    compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True})
            except Exception as exc:  # noqa: BLE001 - the compiled copies are an optional speed-up
                print(f"ortlint: could not cythonize {ext.compiled_as}: {exc}; it stays plain Python")
                continue
            ext.sources = generated.sources
            compiled.append(ext)
        self.extensions = compiled
        super().run()


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


setup(cmdclass={"build_py": BuildPyWithData, "build_ext": BuildNative}, ext_modules=native_extensions())
