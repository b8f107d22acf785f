import cupy as cp

def main():
    x = cp.zeros(10)
    for t in range(1000):
        x += 1
        y = cp.asnumpy(x)
        z = x.get()
        if cp.sum(x) > 0:
            pass
        cp.cuda.Stream.null.synchronize()

if __name__ == "__main__":
    main()
