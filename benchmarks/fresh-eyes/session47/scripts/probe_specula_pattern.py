import cupy as cp
import numpy as np

def cpuArray(v):
    if isinstance(v, cp.ndarray):
        return cp.asnumpy(v)
    return np.array(v)

class Obj:
    def __init__(self):
        self.xp = cp
        self.v = cp.zeros(3)
        self.stream = cp.cuda.Stream(non_blocking=False)

    def trigger_code(self):
        a = float(cpuArray(self.v))
        b = cp.asnumpy(self.v)
        s = self.xp.sum(self.v)
        if s > 0:
            pass
        print('SR:', s)

    def post_trigger(self):
        self.stream.synchronize()

def run(objs, n):
    for t in range(n):
        for o in objs:
            o.trigger_code()
        for o in objs:
            o.post_trigger()

def run2(x, n):
    for t in range(n):
        y = cp.asnumpy(x)
        if cp.sum(x) > 0:
            print(cp.sum(x))
