"""robot_dynamics: an ament_python ROS 2 package that is also a plain pip package."""
from glob import glob

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

PACKAGE = "robot_dynamics"


class BuildExt(build_ext):
    """build_ext with NumPy's headers (pyproject.toml's build requirements), imported only when compiling."""

    def build_extensions(self):
        import numpy
        for extension in self.extensions:
            extension.include_dirs.append(numpy.get_include())
        super().build_extensions()


setup(
    name=PACKAGE,
    version="0.1.0",
    description="M, C (passive), g, CoM Jacobian and the Slotine-Li regressor of URDF robots; ROS 2 nodes",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    python_requires=">=3.10",
    install_requires=["numpy>=1.24", "scipy>=1.10", "lxml>=4.9", "numba>=0.59", "matplotlib>=3.6"],
    extras_require={
        # test-only oracles and tools (not ROS dependencies: package.xml does not name them): the Pinocchio
        # oracle, MuJoCo as physics we did not write (closed loops, test_adaptive_mujoco.py), iDynTree as a second
        # opinion on the Christoffel C, the lint (flake8, pydocstyle) and the colcon build of test_packaging.py
        "test": ["pytest>=7", "pytest-xdist>=3", "pin>=3.0", "example-robot-data>=4.1", "mujoco>=4.0",
                 "idyntree>=12", "xacro>=2.0", "pyyaml", "flake8>=7", "pydocstyle>=6", "catkin-pkg>=1.0",
                 "colcon-core>=0.15", "colcon-ros>=0.4", "colcon-bash>=0.5",
                 "dask[array,distributed]>=2024.1", "rosbags>=0.10", "cloudpickle>=3.0",
                 "viser>=1.0", "trimesh>=4.0", "pycollada>=0.8", "playwright>=1.40"],
        # the browser view (issue 40, robot_dynamics/viewer.py): viser serves it, trimesh reads STL/OBJ and, with
        # pycollada, DAE meshes; the tests drive Debian's chromium with playwright
        "view": ["viser>=1.0", "trimesh>=4.0", "pycollada>=0.8"],
        # identification (issue 15): the Dask route (scale_out.py), ROS 2 bags without ROS, parameters as YAML
        "identify": ["dask[array,distributed]>=2024.1", "rosbags>=0.10", "cloudpickle>=3.0", "pyyaml"],
        "xacro": ["xacro>=2.0"],
        # MJCF models (rd.load_mjcf, rd.from_mujoco): MuJoCo compiles them (robot_dynamics/mjcf.py)
        "mjcf": ["mujoco>=4.0"],
        "ros": [
            "ros-rclpy", "ros-rmw-fastrtps-cpp", "ros-std-msgs", "ros-sensor-msgs",
            "ros-nav-msgs", "ros-geometry-msgs", "ros-trajectory-msgs", "ros-rosgraph-msgs", "ros-rcl-interfaces",
            "ros-builtin-interfaces", "ros-diagnostic-msgs", "ros-lifecycle-msgs", "ros-ament-index-python",
            "xacro>=2.0", "pyyaml",
        ],
    },
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/urdf", glob("urdf/*.urdf")),
        ("share/" + PACKAGE + "/launch", glob("launch_scripts/*.launch.py")),   # where ros2 launch finds them
        ("share/" + PACKAGE + "/scripts",                                        # plain scripts, without launch
         [f for f in glob("launch_scripts/*.py") if not f.endswith(".launch.py")]),
    ],
    entry_points={
        "console_scripts": [
            "robot-dynamics = robot_dynamics.cli:main",
            "dynamics_node = robot_dynamics.ros.dynamics_node:main",
            "lifecycle_dynamics_node = robot_dynamics.ros.lifecycle_node:main",
            "computed_torque_node = robot_dynamics.ros.computed_torque_node:main",
            "adaptive_controller_node = robot_dynamics.ros.adaptive_controller_node:main",
            "sim_node = robot_dynamics.ros.sim_node:main",
        ],
    },
    # the single-state calls in C (robot_dynamics/calls/_fastcall.c); optional: without a C compiler the package
    # installs and every method runs its Python path (test_fast_calls.py fails, to say so)
    ext_modules=[Extension(PACKAGE + ".calls._fastcall", [PACKAGE + "/calls/_fastcall.c"], optional=True,
                           extra_compile_args=["-O2"])],
    cmdclass={"build_ext": BuildExt},
    zip_safe=False,
)
