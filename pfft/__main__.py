"""``python -m pfft``: print pfft's configuration (:func:`pfft.show_config`)."""
from .config import show_config

show_config()
