"""Precise mode: C and C++ files listed in a `compile_commands.json` parsed with libclang (real flags,
macros expanded, `#if` resolved, call targets known by type), lowered by the C and C++ lowerings.

    compile_db.py   finding and reading the compile database
    frontend.py     `parse_with_clang`: libclang's view handed to the tree-sitter lowerings as an oracle
"""
