"""``python -m stages <name> --params params.yaml [--system ITEM]``: run one stage
(``stages.common.main``); dvc.yaml's commands (``stages.table``)."""

import sys

from stages.common import main

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
