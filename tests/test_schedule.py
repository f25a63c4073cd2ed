"""schedule.Readiness: the dataflow order of the call graph's components (callees first)."""
from ortlint.orchestration.program import strongly_connected
from ortlint.orchestration.schedule import Readiness


def components_of(graph: dict) -> tuple[list, dict]:
    components = strongly_connected(graph)
    return components, {key: i for i, members in enumerate(components) for key in members}


GRAPH = {  # main -> (load, run); run -> (load, log); load -> log; a <-> b (recursive) -> log
    "main": ["load", "run"], "run": ["load", "log"], "load": ["log"], "log": [],
    "a": ["b", "log"], "b": ["a"],
}


def test_a_component_is_ready_once_every_callee_component_is_done() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    assert [components[i] for i in ready.initial()] == [["log"]]
    assert sorted(components[i][0] for i in ready.done(index["log"])) == ["a", "load"]
    assert ready.done(index["a"]) == []  # the cycle a <-> b is one component: nothing waits on it
    assert [components[i] for i in ready.done(index["load"])] == [["run"]]
    assert ready.stuck() == [index["main"]]
    assert [components[i] for i in ready.done(index["run"])] == [["main"]]
    assert ready.stuck() == []


def test_every_component_becomes_ready_exactly_once_in_callee_first_order() -> None:
    graph = {f"f{i}": [f"f{j}" for j in range(i) if (i * 7 + j) % 3 == 0] for i in range(40)}
    components, _ = components_of(graph)
    ready = Readiness(graph, components)
    done: list[int] = []
    todo = ready.initial()
    while todo:
        i = todo.pop()
        done.append(i)
        todo.extend(ready.done(i))
    assert sorted(done) == list(range(len(components)))
    position = {i: n for n, i in enumerate(done)}
    for i, members in enumerate(components):
        for callee in {t for key in members for t in graph[key]}:
            j = next(c for c, m in enumerate(components) if callee in m)
            assert j == i or position[j] < position[i]


def test_chain_costs_put_the_longest_chain_of_callers_first() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    cost = {"log": 1.0, "load": 2.0, "run": 4.0, "main": 8.0}
    chain = ready.chain_costs([sum(cost.get(k, 0.5) for k in members) for members in components])
    assert chain[index["main"]] == 8.0
    assert chain[index["run"]] == 12.0
    assert chain[index["load"]] == 14.0  # load -> run -> main
    assert chain[index["log"]] == 15.0
    assert chain[index["a"]] == 1.0  # a and b: 0.5 each, nothing above them


def test_chain_costs_leave_out_finished_components() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    ready.done(index["log"])
    chain = ready.chain_costs([1.0] * len(components))
    assert index["log"] not in chain
    assert chain[index["load"]] == 3.0  # load -> run -> main


def test_release_stuck_takes_the_waiting_components_as_ready_once() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    ready.done(index["log"])
    assert sorted(ready.release_stuck()) == sorted([index["run"], index["main"]])
    assert ready.stuck() == [] and ready.release_stuck() == []


# ------------------------------------------------------------------- parse chunks (parallel._Chunks)

def test_parse_chunks_keep_each_worker_on_neighbouring_files() -> None:
    from ortlint.orchestration.parallel import _Chunks, _path_order_chunks
    items = [(f"/t/{d}/f{i}.c", "c", None) for d in ("a", "b", "c", "d") for i in range(6)]
    chunks, big = _path_order_chunks(items, [1 << 16] * len(items), 2)  # one file a chunk
    assert not big
    assert [c[0][0] for c in chunks] == sorted(path for path, _l, _d in items)
    queue = _Chunks(chunks, 2)
    taken: dict[int, list[str]] = {0: [], 1: []}
    for _ in range(10):  # both take in turn: each goes on from its own start
        for w in (0, 1):
            taken[w].append(queue.take(w)[0][0])
    assert taken[0] == sorted(taken[0]) and taken[1] == sorted(taken[1])
    assert not set(taken[0]) & set(taken[1])
    assert all(path.startswith(("/t/a/", "/t/b/")) for path in taken[0][:12])
    rest = []
    while (chunk := queue.take(1)) is not None:
        rest.append(chunk[0][0])
    assert sorted(taken[0] + taken[1] + rest) == sorted(path for path, _l, _d in items)


def test_a_worker_whose_next_chunk_is_taken_starts_in_the_middle_of_the_longest_free_run() -> None:
    from ortlint.orchestration.parallel import _Chunks
    queue = _Chunks([[(str(i), "c", None)] for i in range(10)], 2)  # worker 0 starts at 0, worker 1 at 5
    assert [queue.take(1)[0][0] for _ in range(5)] == ["5", "6", "7", "8", "9"]
    assert queue.take(1)[0][0] == "2"  # free: 0-4, the middle
    assert queue.take(0)[0][0] == "0"
    assert queue.take(0)[0][0] == "1"
    assert queue.take(0)[0][0] == "4"  # 2 is taken: the longest free run is 3-4
    queue.put_back([[("again", "c", None)]])
    assert queue.take(1)[0][0] == "again"  # a lost request's files come first
    assert queue.take(1)[0][0] == "3"
    assert queue.take(0) is None


def test_a_file_much_larger_than_a_chunk_is_parsed_first() -> None:
    from ortlint.orchestration.parallel import _Chunks, _path_order_chunks
    items = [(f"/t/a/f{i}.java", "java", None) for i in range(40)] + [("/t/z/Generated.java", "java", None)]
    sizes = [20 << 10] * 40 + [2 << 20]
    in_order, big = _path_order_chunks(items, sizes, 2)
    assert big == [[("/t/z/Generated.java", "java", None)]]
    assert all(path != "/t/z/Generated.java" for chunk in in_order for path, _l, _d in chunk)
    queue = _Chunks(in_order, 2, big)
    assert queue.take(1)[0][0] == "/t/z/Generated.java"  # whoever asks first
    assert queue.take(0)[0][0] == "/t/a/f0.java"


def test_chain_ranks_give_each_function_its_components_chain_cost() -> None:
    from ortlint.orchestration.schedule import ChainRanks
    graph = {"main": ["a", "b"], "a": ["leaf"], "b": [], "leaf": []}
    components = [["leaf"], ["a"], ["b"], ["main"]]
    readiness = Readiness(graph, components)
    ranks = ChainRanks(readiness.chain_costs([1.0, 2.0, 0.5, 4.0]), {k: i for i, c in enumerate(components) for k in c})
    assert ranks.get("leaf") == 7.0 and ranks.get("a") == 6.0 and ranks.get("b") == 4.5 and ranks.get("main") == 4.0
    readiness.done(0)
    ranks = ChainRanks(readiness.chain_costs([1.0, 2.0, 0.5, 4.0]), {k: i for i, c in enumerate(components) for k in c})
    assert ranks.get("leaf") == 0.0 and ranks.get("unknown", -1.0) == -1.0  # finished, or no component: the default
