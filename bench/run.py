"""Kept for `python bench/run.py`: the benchmark lives in dlc.bench (run
`make bench` or `python -m dlc.bench --help`)."""

from dlc.bench import main

if __name__ == "__main__":
    main()
