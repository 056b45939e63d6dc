"""fxmlir: round-trip PyTorch training graphs through MLIR and fuse them."""
