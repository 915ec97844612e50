"""One module per DVC stage: parse args, read params, call releval, write outputs."""
