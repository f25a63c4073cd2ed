"""The Java front end (tree-sitter-java): methods, constructors and lambdas -> IR, on the lowering it shares
with C# (`frontends/managed/`).

    frontend.py      `JavaFrontEnd`, `parse_java`: one file's classes and their functions
    lowering.py      `JavaLowering`: one body, assembled from the mixins below
    statements.py    statements and control flow (declarations, labels, loops over elements, switch, yield)
    exceptions.py    throw, try/catch/finally, try-with-resources
    expressions.py   names, fields, arrays, literals, lambdas
    calls.py         `new`, method invocations typed by their receiver, forEach, method references
    names.py         type names as a file sees them (imports, nested and inherited classes)
    type_index.py    the project-wide type index (`javac -sourcepath` view)
    syntax.py        the parser, field ids, comment scanning
    tables.py        limits, literal and statement tables, names of nested functions
    scopes.py        the lowering's bookkeeping (finally blocks, pending functions)
"""
