# concurrent.futures.ThreadPoolExecutor.map keeps the order of its inputs.
from concurrent.futures import ThreadPoolExecutor


def square(x):
    return x * x


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        out = list(pool.map(square, range(3)))
    assert out == [0, 1, 4], out


if __name__ == "__main__":
    main()
