"""`pip install ./python` into a fresh virtual environment (no network: Debian's
setuptools, --no-build-isolation --no-index) gives that environment's python the
sia package -- not the .pth file scripts/setup.sh writes for the system's python3 --
and a sia.torch example runs with it: two ranks, without PYTHONPATH."""

import os
import shutil
import subprocess
import tempfile
import unittest

from helpers import EXAMPLES, PYTHON, REPO, free_port, reports

NEEDS_TORCH = True


def run(argv, **kwargs):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    return p.returncode, p.stdout + p.stderr


class PipInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        venv = os.path.join(cls.tmp, "venv")
        status, out = run([PYTHON, "-m", "venv", "--system-site-packages", venv])
        if status != 0:
            shutil.rmtree(cls.tmp)
            raise unittest.SkipTest(f"{PYTHON} cannot make a venv (python3-venv): {out}")
        cls.python = os.path.join(venv, "bin", "python")
        # A copy: pip builds in the source directory (build/, sia.egg-info/).
        src = os.path.join(cls.tmp, "src")
        shutil.copytree(os.path.join(REPO, "python"), src,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        cls.env = {k: v for k, v in os.environ.items()
                   if k != "PYTHONPATH" and not k.startswith("SIA_")}
        cls.env.update(OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="",
                       PIP_DISABLE_PIP_VERSION_CHECK="1")
        cls.status, cls.out = run([cls.python, "-m", "pip", "install", "--no-build-isolation",
                                   "--no-index", src], env=cls.env, cwd=cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_venv_imports_its_own_copy(self):
        self.assertEqual(self.status, 0, self.out)
        status, out = run([self.python, "-c", "import sia, sia.torch; print(sia.__file__)"],
                          env=self.env, cwd=self.tmp)
        self.assertEqual(status, 0, out)
        where = os.path.realpath(out.strip())
        self.assertTrue(where.startswith(os.path.realpath(self.tmp) + os.sep), where)
        self.assertFalse(where.startswith(os.path.join(REPO, "python")), where)

    def test_torch_is_not_a_dependency(self):
        self.assertEqual(self.status, 0, self.out)
        status, out = run([self.python, "-m", "pip", "show", "sia"], env=self.env)
        self.assertEqual(status, 0, out)
        requires = [l for l in out.splitlines() if l.startswith("Requires:")]
        self.assertEqual(requires, ["Requires: "], out)

    def test_the_example_runs_as_two_ranks(self):
        self.assertEqual(self.status, 0, self.out)
        script = os.path.join(EXAMPLES, "ddp", "train_sia.py")
        report = os.path.join(self.tmp, "r.jsonl")
        port = free_port()
        procs = []
        for r in range(2):
            env = dict(self.env, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                       LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       SIA_REPORT=report, SIA_CKPT_DIR=os.path.join(self.tmp, "ckpt"),
                       SIA_RENDEZVOUS_TIMEOUT="60")
            procs.append(subprocess.Popen(
                [self.python, script, "--epochs", "2", "--dataset-size", "1024"], env=env,
                cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outs = []
        for p in procs:
            try:
                outs.append(p.communicate(timeout=180)[0])
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                raise
        self.assertEqual([p.returncode for p in procs], [0, 0], outs)
        self.assertIn("epoch 1: loss", outs[0])
        self.assertEqual(reports(report)[-1]["reason"], "done")


if __name__ == "__main__":
    unittest.main()
