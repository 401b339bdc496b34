"""Training under a distribution: setting Keras's distribution and the
guard that checks layouts when Keras builds or fits a model.
"""
