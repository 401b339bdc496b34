"""The machine a training step runs on: its nodes, devices and links, and
the time a compiled step takes there.
"""
