"""The C# front end (tree-sitter-c-sharp): methods, constructors, accessors, lambdas and local functions -> IR.

    frontend.py      `CSharpFrontEnd`, `parse_csharp`: one file's classes and their functions
    lowering.py      `CSharpLowering`: one body, assembled from the mixins below
    statements.py    statements and control flow (loops, foreach, switch, goto, yield, `using var`)
    exceptions.py    throw, try/catch/finally routed per exception, `using` statements
    expressions.py   names, members, `?.`, `??`, patterns, assignments, collections, lambdas
    calls.py         invocations named by the receiver's type, overloads, constructors, static types
    api.py           the `[[csharp_api]]` tables: API classes, signatures, overload resolution
    project.py       the project index (`.sln`/`.csproj` folder): classes, members, disposal evidence
    types.py         type names: canonical text, element types, collections
    syntax.py        the parser, field ids, `#if` branches and pointer casts blanked before parsing
    scopes.py        the lowering's bookkeeping (try frames, break targets, pending functions)
"""
