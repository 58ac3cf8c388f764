"""Local FFT engines: transforms of the trailing axes of one device's block."""
