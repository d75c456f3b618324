"""`python -m offer_author ...`: the same as the `offer-author` command."""

import sys

from offer_author.cli import main

if __name__ == "__main__":
    sys.exit(main())
