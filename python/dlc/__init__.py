"""dlc: an MLIR-based deep-learning compiler."""
