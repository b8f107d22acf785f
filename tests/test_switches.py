"""Options a class sets once (model/switches.py): read from the module text."""

import libcst as cst

from streamlint.model.switches import Options, config_attributes, switch_test

SOURCE = '''
class Reducer:
    def __init__(
        self,
        overlap_comm: bool = True,
    ) -> None:
        self.overlap_comm = overlap_comm
        self.cache_op = True
        self.a, self.b = 1, 2
        self.bucket[0] = 3
        self.width: int = 4
        self.groups = []
        self.streams = {}
        register(self.handle, y=1)
        if self.overlap_comm == 2:
            pass

        def hook():
            self.seen = 1

    def set_cache_op(self, on):
        self.cache_op = on
        self.b += 1

    def _lazy_init(self):
        if len(self.streams) > 0:
            return
        self.streams["side"] = make_stream()
        self.groups.append(1)
'''


def test_options_are_attributes_only_init_sets():
    options = config_attributes(SOURCE)
    # A multi-line signature does not end `__init__`; a nested function is not `__init__`.
    # A container another method fills (`self.streams[k] = v`, `self.groups.append(v)`) is state.
    assert options.fixed == {"overlap_comm", "a", "width"}
    assert options.on == {"cache_op"}  # set to True in __init__, turned off by a setter


def _test(text):
    return cst.parse_expression(text)


def test_switch_tests():
    options = Options(fixed=frozenset({"overlap_comm", "mode"}), on=frozenset({"cache_op"}))
    assert switch_test(_test("self.overlap_comm"), options)
    assert switch_test(_test("not self.overlap_comm"), options)
    assert switch_test(_test("self.cache_op"), options)
    assert not switch_test(_test("not self.cache_op"), options)  # runs only when turned off
    assert switch_test(_test("self.mode == Mode.FAST"), options)
    assert switch_test(_test("self.overlap_comm or self.at_boundary"), options)
    assert not switch_test(_test("self.overlap_comm and step % 10 == 0"), options)
    assert not switch_test(_test("self.verbose"), options)
    assert not switch_test(_test("step == 0"), options)
