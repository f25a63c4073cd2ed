import ai.onnxruntime.*;
// A finally holding a try whose exits run their own copies of it, fourteen levels deep: the
// copies grew as 3^14 (the fuzzer found a hang of this shape); the method is now skipped with a note.
public class FinallyNestedWithReturns {
  static void f(OnnxTensor t, int x) {
    try { if (x > 13) return; t.close(); } finally { try { if (x > 12) return; t.close(); } finally { try { if (x > 11) return; t.close(); } finally { try { if (x > 10) return; t.close(); } finally { try { if (x > 9) return; t.close(); } finally { try { if (x > 8) return; t.close(); } finally { try { if (x > 7) return; t.close(); } finally { try { if (x > 6) return; t.close(); } finally { try { if (x > 5) return; t.close(); } finally { try { if (x > 4) return; t.close(); } finally { try { if (x > 3) return; t.close(); } finally { try { if (x > 2) return; t.close(); } finally { try { if (x > 1) return; t.close(); } finally { try { if (x > 0) return; t.close(); } finally { t.close(); } } } } } } } } } } } } } }
  }
}
