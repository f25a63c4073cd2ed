"""The Go front end (tree-sitter-go): functions and closures of files using onnxruntime_go -> IR.

    frontend.py      `GoFrontEnd`, `parse_go`: one file's functions
    lowering.py      `GoLowering`: one body, assembled from the mixins below
    statements.py    declarations and assignments with several values, sends
    control.py       if, for and range loops, switch/select, labels, goto
    exits.py         return, defer, goroutines and closures
    expressions.py   names, selectors, indexes, composite literals
    calls.py         the binding's constructors and methods, append, call-valued arguments
    closure_locals.py  locals bound once to a function literal (a call through one runs it)
    scan.py          the file scan (imports, types, variadic functions of the package)
    cgo.py           cgo preambles through the C front end
    syntax.py        field ids, builtins, error values
    scopes.py        the lowering's bookkeeping (break targets, deferred calls, closures)
"""
