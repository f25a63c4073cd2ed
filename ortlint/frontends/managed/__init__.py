"""What the managed-language front ends (Java, C#) share: the lowering of one body over `CfgBuilder`,
with the language differences given as class attributes and small hooks.

    lowering.py      `ManagedLowering`: scopes of locals, dispatch of statements and expressions, the
                     function's entry and exit, unparsed code, `finally` copies
    statements.py    statements both languages have: expression statements, `return`, `if`, `while`,
                     `do`, `for`, loops over elements, `break`, `continue`
    scopes.py        the bookkeeping both keep: break targets, lambda bodies inlined as loop bodies
    limits.py        nesting and `finally` copy limits, stack room for the nesting
    project_files.py the source files of a project folder, within the index's bounds
    syntax.py        field ids of a grammar, a pre-order walk of a tree
    units.py         around the lowerings of one file: a function that cannot be lowered becomes a
                     note, a syntax error no function noted gets one
"""
