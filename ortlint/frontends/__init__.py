"""Front ends: source text -> the language-neutral IR of `ortlint.ir`, one package per language.

    registry.py   which suffixes belong to which language, and each language's entry point
    common/       what the C-family front ends share: reading and decoration blanking, the CFG
                  builder every lowering uses, the header index, macro rewriting before parsing
    c/            C and JNI (tree-sitter-c)
    cpp/          C++ (tree-sitter-cpp), built on the C lowering
    clang/        precise mode: C and C++ through libclang with a compile database
    managed/      what the Java and C# lowerings share: scopes, dispatch, `return`, `if`, loops,
                  `break`/`continue`, `finally` copies (each language's differences as hooks)
    java/         Java (tree-sitter-java), on managed/
    go/           Go (tree-sitter-go), cgo preambles through the C front end
    csharp/       C# (tree-sitter-c-sharp), on managed/

A front end decides no finding: it lowers syntax, blanks decorations and expands macros. A new
language is a new package here and one `Language` entry in registry.py.
"""
