"""schedule.Readiness: the dataflow order of the call graph's components (callees first)."""
from ortlint.runner import strongly_connected
from ortlint.schedule import Readiness


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
    chain = ready.chain_costs(lambda i: sum(cost.get(k, 0.5) for k in components[i]))
    assert chain[index["main"]] == 8.0
    assert chain[index["run"]] == 12.0
    assert chain[index["load"]] == 14.0  # load -> run -> main
    assert chain[index["log"]] == 15.0
    assert chain[index["a"]] == 1.0  # a and b: 0.5 each, nothing above them


def test_chain_costs_leave_out_finished_components() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    ready.done(index["log"])
    chain = ready.chain_costs(lambda i: 1.0)
    assert index["log"] not in chain
    assert chain[index["load"]] == 3.0  # load -> run -> main


def test_release_stuck_takes_the_waiting_components_as_ready_once() -> None:
    components, index = components_of(GRAPH)
    ready = Readiness(GRAPH, components)
    ready.done(index["log"])
    assert sorted(ready.release_stuck()) == sorted([index["run"], index["main"]])
    assert ready.stuck() == [] and ready.release_stuck() == []
