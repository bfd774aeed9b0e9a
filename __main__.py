from deepresearch.cluster.dependency_check import require

require()  # a Python without the dependencies gets one line naming them, not an ImportError

from deepresearch.cli import main  # noqa: E402

main()
