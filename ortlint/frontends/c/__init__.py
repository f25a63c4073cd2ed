"""The C front end (tree-sitter-c): C and JNI functions -> IR.

    frontend.py      `CFrontEnd`: one file (macros, functions, constants); `parse_c` for known C
    lowering.py      `FunctionLowering`: one function body, assembled from the mixins below
    statements.py    statements and control flow (if/loops/switch, goto, labels, conditions)
    preprocessor.py  `#if` alternatives as paths, macro expansion, unparsable code
    expressions.py   expressions and calls (both JNI call styles, function tables)
    syntax.py        declarators, literals, operator and type-name tables
"""
