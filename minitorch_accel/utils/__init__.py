"""Utilities: gradient checks, timing, the environment report."""

from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
