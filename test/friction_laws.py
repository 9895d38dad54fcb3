"""Friction laws written out from the literature (robot_dynamics/friction.py's docstring), not from the library's
code, and physical parameters for them: the independent route of test/api/test_friction.py and
test/identification/test_drives_identification.py."""
import numpy as np

FIELDS = {"viscous": ("damping",), "coulomb": ("damping", "friction"), "offset": ("damping", "friction", "offset"),
          "sigmoid": ("damping", "phi1", "phi2", "phi3"),
          "stribeck": ("damping", "friction", "static", "stribeck_velocity")}


def law(name, p, v, smooth=True):
    """tau_f(v) of model `name` with parameters p (a dict of arrays); the sign smoothed over 0.01 rad/s, or exact."""
    s = np.tanh(v / 0.01) if smooth else np.sign(v)
    if name == "viscous":
        return p["damping"] * v
    if name == "coulomb":
        return p["damping"] * v + p["friction"] * s
    if name == "offset":
        return p["damping"] * v + p["friction"] * s + p["offset"]
    if name == "sigmoid":                       # Gaz et al. 2019: phi1/(1+e^-phi2(v+phi3)) - phi1/(1+e^-phi2 phi3)
        phi1, phi2, phi3 = p["phi1"], p["phi2"], p["phi3"]
        return p["damping"] * v + phi1 / (1 + np.exp(-phi2 * (v + phi3))) - phi1 / (1 + np.exp(-phi2 * phi3))
    F_c, F_s, v_s = p["friction"], p["static"], p["stribeck_velocity"]
    return p["damping"] * v + (F_c + (F_s - F_c) * np.exp(-(v / v_s) ** 2)) * s


def random_parameters(name, rng, n):
    """Physical parameters of model `name` for n coordinates: every level positive, the offset and phi3 of either
    sign, F_s above F_c, v_s between 0.05 and 0.2 rad/s, phi2 between 5 and 20 s/rad (Gaz et al.'s range)."""
    p = {"damping": rng.uniform(0.1, 2.0, n), "friction": rng.uniform(0.5, 3.0, n), "offset": rng.uniform(-1, 1, n),
         "phi1": rng.uniform(0.5, 3.0, n), "phi2": rng.uniform(5.0, 20.0, n), "phi3": rng.uniform(-0.05, 0.05, n),
         "stribeck_velocity": rng.uniform(0.05, 0.2, n)}
    p["static"] = p["friction"] * rng.uniform(1.3, 2.0, n)
    return {key: p[key] for key in FIELDS[name]}
