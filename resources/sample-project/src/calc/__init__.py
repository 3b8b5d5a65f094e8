"""A small calculator used to demonstrate agent sandboxes."""

from .ops import add, mean, percent

__all__ = ["add", "mean", "percent"]
