"""streamlint: find CUDA stream serialization and races in Python GPU code, statically."""

__version__ = "0.1.0"
