"""lifecycle_dynamics_node: dynamics_node as a managed (lifecycle) node.

The same parameters, topics, outputs and checks as robot_dynamics.ros.dynamics_node, under the ROS 2 node
lifecycle (rclpy.lifecycle; services ``~/change_state``, ``~/get_state``, ... as for every managed node):

- **unconfigured** (at start-up): parameters declared, the ``robot_description`` topic listened to; nothing
  else. A node that cannot load its description still starts, so a lifecycle manager can report the failure.
- **configure**: load the description -- the ``robot_description`` parameter, else ``urdf_path``, else the last
  message of the ``robot_description`` topic -- with every check of dynamics_node's start-up; advertise the
  outputs and subscribe to the inputs. A description that cannot serve fails the transition (the node stays
  unconfigured and says why in its log). ``joints`` is declared, read-only, by the first configure: a later
  configure must find the same joints (restart the node to serve another robot).
- **activate**: answer joint states (the outputs are lifecycle publishers). **deactivate**: stop answering (no
  computation, nothing published). While configured, a changed description loads in the background and swaps in
  as in dynamics_node.
- **cleanup** (and **shutdown**, and after an error): abandon a load in progress, drop the model, the outputs and
  the inputs but the description topic.

Run it as ``ros2 run robot_dynamics lifecycle_dynamics_node --ros-args -p urdf_path:=arm7``, then
``ros2 lifecycle set /dynamics_node configure`` and ``... activate`` (or a lifecycle manager).
"""
import sys

from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

from robot_dynamics.ros.dynamics_node import DynamicsLogic
from robot_dynamics.ros.guard import GuardedCallbacks, SkipsBadMessages
from robot_dynamics.ros.runner import run

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE


class LifecycleDynamicsNode(DynamicsLogic, GuardedCallbacks, SkipsBadMessages, LifecycleNode):
    """The dynamics node under the node lifecycle (see the module docstring).

    Parameters
    ----------
    node_name : str
        Default name, overridden by ``--ros-args -r __node:=...``.
    **kwargs
        Passed to :class:`rclpy.lifecycle.LifecycleNode`.

    Attributes
    ----------
    lifecycle_state : str
        ``"unconfigured"``, ``"inactive"``, ``"active"`` or ``"finalized"`` (also on /diagnostics).
    """

    def __init__(self, node_name="dynamics_node", **kwargs):
        super().__init__(node_name, **kwargs)
        self.lifecycle_state = "unconfigured"
        try:
            self._setup(loading=False)                       # until configure: the topic's description is kept
        except Exception:
            self.destroy_node()
            raise
        self.description.listen()

    @property
    def _active(self):
        return self.lifecycle_state == "active"

    def _create_output(self, msg_type, topic, qos, **options):
        return self.create_lifecycle_publisher(msg_type, topic, qos, **options)

    def _destroy_output(self, publisher):
        self.destroy_lifecycle_publisher(publisher)

    def on_configure(self, state):
        """Load the description (parameters, else the topic's last), then advertise and subscribe."""
        try:
            self.description.load_initial()
        except (ValueError, OSError) as err:
            self.get_logger().error(f"configure failed: {err}")
            return FAILURE
        if self.robot is None:
            self.get_logger().error("configure failed: no robot description (robot_description and urdf_path are "
                                    "empty and nothing has arrived on the robot_description topic)")
            return FAILURE
        self._open()
        self.description.enabled = True                      # a new description now loads and swaps in
        self.lifecycle_state = "inactive"
        return super().on_configure(state)

    def on_activate(self, state):
        """Answer joint states from now on."""
        result = super().on_activate(state)                  # enables the lifecycle publishers
        self.lifecycle_state = "active"
        return result

    def on_deactivate(self, state):
        """Stop answering (nothing computed, nothing published)."""
        self.lifecycle_state = "inactive"
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        """Back to unconfigured: no model, no output, no input but the description topic."""
        self._unconfigure()
        return super().on_cleanup(state)

    def on_shutdown(self, state):
        """Finalized, from any state."""
        self._unconfigure()
        self.lifecycle_state = "finalized"
        return super().on_shutdown(state)

    def on_error(self, state):
        """After a transition raised: clean up and go back to unconfigured."""
        self._unconfigure()
        return SUCCESS

    def _unconfigure(self):
        self.lifecycle_state = "unconfigured"
        self.description.drop()
        self._close()
        self.inputs.forget()

    def destroy_node(self):
        """Let running callbacks return, abandon a load in progress, then destroy."""
        self.quiesce()
        self._teardown()
        return super().destroy_node()


def main(args=None):
    """Console entry point: ``lifecycle_dynamics_node --ros-args -p name:=value ...``."""
    return run(LifecycleDynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
