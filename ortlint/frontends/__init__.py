"""Front ends: source text -> the language-neutral IR of `ortlint.ir`, one package per language.

    registry.py   which suffixes belong to which language, and each language's entry point
    common/       what the C-family front ends share: reading and decoration blanking, the CFG
                  builder every lowering uses, the header index, macro rewriting before parsing
    c/            C and JNI (tree-sitter-c)
    cpp/          C++ (tree-sitter-cpp), built on the C lowering
    clang/        precise mode: C and C++ through libclang with a compile database
    java/         Java (tree-sitter-java)
    go/           Go (tree-sitter-go), cgo preambles through the C front end
    csharp/       C# (tree-sitter-c-sharp)

A front end decides no finding: it lowers syntax, blanks decorations and expands macros. A new
language is a new package here and one `Language` entry in registry.py.
"""
