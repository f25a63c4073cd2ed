"""The C# front end (tree-sitter-c-sharp): methods, constructors, accessors, lambdas and local functions -> IR,
on the lowering it shares with Java (`frontends/managed/`).

    frontend.py      `CSharpFrontEnd`, `parse_csharp`: one file's classes and their functions
    lowering.py      `CSharpLowering`: one body, assembled from the mixins below
    statements.py    statements and control flow (loops, foreach, switch, goto, yield, `using var`)
    exceptions.py    throw, try/catch/finally routed per exception, `using` statements
    expressions.py   names, members, `?.`, `??`, patterns, assignments, lambdas
    containers.py    arrays, tuples, collection initializers, `c[k] = v`: local collections
    calls.py         invocations named by the receiver's type, overloads, constructors, extension methods
    static_types.py  the static types of expressions and the types receivers name
    api.py           the `[[csharp_api]]` tables: API classes, signatures, overload resolution
    project.py       the project index (`.csproj` folder): classes, members, signatures, bases
    project_view.py  what a file asks of the analyzed code: classes, members, methods, disposal
    evidence.py      which members the bodies of a class dispose (storing there hands an object on)
    types.py         type names: canonical text, element types, collections
    syntax.py        the parser, field ids, `#if` branches and pointer casts blanked before parsing
    scopes.py        the lowering's bookkeeping (try frames, pending functions)
"""
