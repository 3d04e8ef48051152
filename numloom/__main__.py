"""``python -m numloom script.py [args]``, ``python -m numloom bench``: see numloom.tools.runner."""

import sys

from numloom.tools.runner import main

if __name__ == "__main__":
    sys.exit(main())
