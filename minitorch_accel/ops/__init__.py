"""The math: every op written once against the backend's ``xp`` array module."""
