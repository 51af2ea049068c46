"""The simulated world: sensors and noise models, motion (trajectories), and later fields,
mobility and a synthetic city."""
