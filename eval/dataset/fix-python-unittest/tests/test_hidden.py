import unittest

from chunks import chunk


class HiddenChunkTest(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(chunk([], 3), [])

    def test_short(self):
        self.assertEqual(chunk(["a", "b"], 5), [["a", "b"]])

    def test_one(self):
        self.assertEqual(chunk([1, 2, 3], 1), [[1], [2], [3]])

    def test_bad_size(self):
        with self.assertRaises(ValueError):
            chunk([1], 0)
