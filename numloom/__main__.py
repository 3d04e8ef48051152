"""``python -m numloom script.py [args]``, ``python -m numloom bench``: see numloom.runner."""

import sys

from numloom.runner import main

if __name__ == "__main__":
    sys.exit(main())
