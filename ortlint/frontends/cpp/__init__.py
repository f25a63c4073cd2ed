"""The C++ front end (tree-sitter-cpp): on top of the C lowering, classes, destructors, exceptions,
smart pointers, lambdas and inlining of the file's own methods.

    frontend.py      `CppFrontEnd`, `parse_cpp`, and `parse_c_family` (the entry of `.c`/`.h` files:
                     C unless written in C++)
    lowering.py      `CppLowering`: one function, method or lambda, assembled from the mixins below
    types.py         types of names, members, calls and receivers
    statements.py    scopes and their destructors, returns, loops, range-for
    exceptions.py    throw, try/catch
    declarations.py  locals and their initializers, prototypes vs constructions
    ownership.py     smart pointers and deleters (temporaries too), containers' operations, scope guards,
                     the file's own classes' objects
    inlining.py      the file's own methods, constructors, destructors and lambdas inlined
    expressions.py   expressions and calls (new/delete, member, table and typed method calls)
    arguments.py     what arguments build: blocks of code given to macros, lists building stored objects
    packs.py         function parameter packs: a pack as several parameters, its expansion as all of them
    struct_arguments.py  a local struct whose fields were filled, passed to a call, hands on what they hold
    base_destructors.py  an exception leaving a constructor runs its bases' destructors
    container_moves.py   `a.swap(b)` of containers; `map_[k]` keeping pointer keys
    pp_alternatives.py   an owner each `#if` alternative declares is destroyed once
    model.py         the file model: classes, members, aliases, return types; the policy's C++ view
    guards.py        status guard classes (`Ort::Status`, `[[guard]]`)
    status_values.py status classes returned by value (`Status`, `[status_object]`) read as integer
                     statuses: `st.IsOK()` is `st == 0`, `return {};` is 0, `Status(cat, code, text)` not 0
    containers.py    containers that own what is stored into them
    self_owning.py   objects that own themselves (`delete this`, `[[self_owning]]` bases, constructors
                     registering `this`): handed over when started or built
    address_taken.py reference parameters whose address the callee keeps (`owner.AddChild(*node)`)
    own_allocators.py  the program's own OrtAllocator whose Free is `delete p`: calls given one are marked
                     (`ir.Call.own_free`), the memory they hand out is that release's
    null_members.py  private members declared empty (`Ort::MemoryInfo m_{nullptr};`) and the member names a
                     file mentions, as constants the program merges (a member no code gives a value)
    scopes.py        the lowering's bookkeeping (scopes, frames, try contexts, the libclang oracle)
    syntax.py        name tables, template stripping, declarators
"""
