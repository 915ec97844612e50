"""``python -m stages <name> --params params.yaml [--system ITEM]``: run one stage
(``stages.common.main``); dvc.yaml's commands (``stages.table``). When the flow's warm
worker is named in ``RELEVAL_STAGE_WORKER``, the stage runs there (``stages.worker``)."""

import os
import sys

if __name__ == "__main__":
    if address := os.environ.get("RELEVAL_STAGE_WORKER"):
        from stages.worker import hand_over

        if (status := hand_over(address, sys.argv[1:])) is not None:
            sys.exit(status)
    from stages.common import main

    main(sys.argv[1], sys.argv[2:])
