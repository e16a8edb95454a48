"""Write operations, named <entity>_<action>. Side effects (tasks, the AI) are queued on commit, visibly."""
