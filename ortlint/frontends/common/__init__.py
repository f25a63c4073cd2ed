"""What the C-family front ends (and, for `source` and `cfg`, every front end) share.

    source.py               reading files, blanking decorations (`JNIEXPORT`, SAL, ...) without moving
                            offsets, the parse time and memory caps
    cfg.py                  `CfgBuilder`: blocks, terminators, exception handlers, cleanups; the base
                            of every language's lowering
    header_index.py         the analyzed tree's own `#include "..."` headers: macros, prototypes,
                            classes, aliases
    returns_this.py         argument-less methods whose body is `return this;` (in a class body or a
                            macro it invokes): a call of one is its receiver
    macro_args.py           function-like macros: arguments and expansion
    string_macros.py        literals glued to macros, rewritten into plain concatenations
    declaration_macros.py   macros that take a declaration or a type, expanded in place
    definition_macros.py    functions written with macros for their head and braces
    decorations.py          unknown export and declaration macros (`class MY_EXPORTS Name {`,
                            `MY_API Type *f(`) recognized as decorations and blanked
    conditionals.py         `#if` groups that broke the parse reduced to one alternative (a retry)
    member_macros.py        bare `NAME(args)` lines without `;` (member-declaring macros) on error
                            lines blanked (the same retry)
    embedded.py             JavaScript (`EM_ASM`, `EM_JS`) and MSVC `__asm {}` blocks made opaque
    trees.py                the pre-order walk over a syntax tree (Go, Java, C#)
    integer_types.py        which declared types are unsigned integers (`size_t`, `uint32_t`)
"""
