#define G_LOG_DOMAIN "sv-test"

#include "sv-test-python.h"

#include <string.h>

#define SV_TEST_PYTHON "/usr/bin/python3"

gboolean
sv_test_python_has (const char *modules)
{
  g_autofree char *code = g_strdup_printf ("import %s", modules);
  const char *argv[] = { SV_TEST_PYTHON, "-c", code, NULL };
  int status = 0;

  if (!g_file_test (SV_TEST_PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  if (!g_spawn_sync (NULL, (char **)argv, NULL,
                     G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL,
                     NULL, &status, NULL))
    return FALSE;
  return g_spawn_check_wait_status (status, NULL);
}

char *
sv_test_python (const char *script, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;

  if (!g_file_test (SV_TEST_PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip (SV_TEST_PYTHON " is not installed");
      return NULL;
    }
  g_ptr_array_add (argv, (gpointer)SV_TEST_PYTHON);
  g_ptr_array_add (argv, (gpointer)"-c");
  g_ptr_array_add (argv, (gpointer)script);
  for (gsize i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    g_error ("cannot run " SV_TEST_PYTHON ": %s", error->message);
  if (!g_spawn_check_wait_status (status, &error))
    {
      /* A missing reference library is a skip, not a failure. */
      if (err != NULL && strstr (err, "ModuleNotFoundError") != NULL)
        {
          g_test_skip_printf ("a Python module is missing: %s", g_strstrip (err));
          return NULL;
        }
      g_error ("python failed (%s): %s", error->message, err != NULL ? err : "");
    }
  return g_steal_pointer (&out);
}

const char sv_test_tifffile_prelude[] =
  "import numpy, tifffile\n"
  "try:\n"
  "    import imagecodecs\n"
  "except ImportError:\n"
  "    imagecodecs = None\n"
  "if imagecodecs is None:\n"
  "    import zstandard\n"
  "\n"
  "    def _bytes(data):\n"
  "        if isinstance(data, numpy.ndarray):\n"
  "            return numpy.ascontiguousarray(data).tobytes()\n"
  "        return bytes(data)\n"
  "\n"
  "    def _zstd_decode(data, out=None, **kw):\n"
  "        return zstandard.ZstdDecompressor().decompressobj().decompress(_bytes(data))\n"
  "\n"
  "    def _zstd_encode(data, level=None, out=None, **kw):\n"
  "        return zstandard.ZstdCompressor(level=level or 3).compress(_bytes(data))\n"
  "\n"
  "    def _lzw_decode(data, out=None, **kw):\n"
  "        data = _bytes(data)\n"
  "        table = [bytes([i]) for i in range(256)] + [b'', b'']\n"
  "        res = bytearray()\n"
  "        pos, nbits, prev, end = 0, 9, None, len(data) * 8\n"
  "        while pos + nbits <= end:\n"
  "            i = pos >> 3\n"
  "            word = int.from_bytes(data[i:i + 3].ljust(3, b'\\0'), 'big')\n"
  "            code = (word >> (24 - nbits - (pos & 7))) & ((1 << nbits) - 1)\n"
  "            pos += nbits\n"
  "            if code == 256:\n"
  "                del table[258:]\n"
  "                nbits, prev = 9, None\n"
  "                continue\n"
  "            if code == 257:\n"
  "                break\n"
  "            if prev is None:\n"
  "                entry = table[code]\n"
  "            else:\n"
  "                entry = table[code] if code < len(table) else prev + prev[:1]\n"
  "                table.append(prev + entry[:1])\n"
  "            res += entry\n"
  "            prev = entry\n"
  "            if len(table) >= (1 << nbits) - 1 and nbits < 12:\n"
  "                nbits += 1\n"
  "        return bytes(res)\n"
  "\n"
  "    def _lzw_encode(data, level=None, out=None, **kw):\n"
  "        data = _bytes(data)\n"
  "        res = bytearray()\n"
  "        acc, accbits, nbits = 0, 0, 9\n"
  "\n"
  "        def put(code):\n"
  "            nonlocal acc, accbits\n"
  "            acc = (acc << nbits) | code\n"
  "            accbits += nbits\n"
  "            while accbits >= 8:\n"
  "                accbits -= 8\n"
  "                res.append((acc >> accbits) & 0xFF)\n"
  "            acc &= (1 << accbits) - 1\n"
  "\n"
  "        table = {bytes([i]): i for i in range(256)}\n"
  "        free = 258\n"
  "        put(256)\n"
  "        w = b''\n"
  "        for c in data:\n"
  "            wc = w + bytes([c])\n"
  "            if wc in table:\n"
  "                w = wc\n"
  "                continue\n"
  "            put(table[w])\n"
  "            table[wc] = free\n"
  "            free += 1\n"
  "            w = bytes([c])\n"
  "            if free == 4094:\n"
  "                put(256)\n"
  "                table = {bytes([i]): i for i in range(256)}\n"
  "                free, nbits = 258, 9\n"
  "            elif free > (1 << nbits) - 1:\n"
  "                nbits += 1\n"
  "        if w:\n"
  "            put(table[w])\n"
  "            free += 1\n"
  "            if free > (1 << nbits) - 1 and nbits < 12:\n"
  "                nbits += 1\n"
  "        put(257)\n"
  "        if accbits:\n"
  "            res.append((acc << (8 - accbits)) & 0xFF)\n"
  "        return bytes(res)\n"
  "\n"
  "    def _floatpred_decode(data, axis=-2, out=None, dist=1):\n"
  "        shape, dt = data.shape, data.dtype\n"
  "        spp, size = shape[-1], dt.itemsize\n"
  "        b = numpy.frombuffer(data.tobytes(), numpy.uint8).reshape(-1, shape[-2] * spp * size)\n"
  "        b = numpy.cumsum(b.reshape(b.shape[0], -1, spp), axis=1, dtype=numpy.uint8)\n"
  "        b = b.reshape(-1, size, shape[-2] * spp)[:, ::-1, :].transpose(0, 2, 1)\n"
  "        return numpy.ascontiguousarray(b).view(dt.newbyteorder('<')).reshape(shape)\n"
  "\n"
  "    def _floatpred_encode(data, axis=-2, out=None, dist=1):\n"
  "        shape, dt = data.shape, data.dtype\n"
  "        spp, size = shape[-1], dt.itemsize\n"
  "        b = numpy.ascontiguousarray(data).astype(dt.newbyteorder('<')).view(numpy.uint8)\n"
  "        b = b.reshape(-1, shape[-2] * spp, size)[:, :, ::-1].transpose(0, 2, 1)\n"
  "        b = numpy.ascontiguousarray(b).reshape(b.shape[0], -1, spp)\n"
  "        d = b.copy()\n"
  "        d[:, 1:] = b[:, 1:] - b[:, :-1]\n"
  "        return d.reshape(d.shape[0], -1).view(dt.newbyteorder('<')).reshape(shape)\n"
  "\n"
  "    tifffile.TIFF.DECOMPRESSORS._codecs.update({50000: _zstd_decode, 5: _lzw_decode})\n"
  "    tifffile.TIFF.COMPRESSORS._codecs.update({50000: _zstd_encode, 5: _lzw_encode})\n"
  "    tifffile.TIFF.UNPREDICTORS._codecs[3] = _floatpred_decode\n"
  "    tifffile.TIFF.PREDICTORS._codecs[3] = _floatpred_encode\n";
